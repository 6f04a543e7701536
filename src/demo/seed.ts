import { sql, type Kysely } from 'kysely';
import { dynamicView, type Database, type DynamicDatabase } from '../db/schema.js';
import { Dice, mulberry32 } from './dice.js';
import {
  buildProjects,
  buildServiceRequests,
  FIRST_TICKETID,
  planWorkOrders,
  REQUESTS_PER_SITE,
  tasksOf,
} from './planning.js';

/** How many rows of each kind one seeding inserted; all zero when the demo data was already there. */
export interface DemoSummary {
  organizations: number;
  sites: number;
  locations: number;
  assets: number;
  items: number;
  workOrders: number;
  /** Tasks of work orders (work-order rows with a parent), beside `workOrders`. */
  tasks: number;
  /** Service requests (MXAPISR) of both sites. */
  serviceRequests: number;
  /** Status-history rows of work orders, assets and service requests. */
  statusHistory: number;
  assetMeters: number;
  assetSpecs: number;
  persons: number;
  users: number;
  groups: number;
  groupMembers: number;
  groupRights: number;
}

export interface SeedOptions {
  passwordHash: string;
  /** Source of randomness in [0, 1); a fixed-seed generator when omitted, so every seeding yields the same rows. */
  random?: () => number;
}

const ORGID = 'EAGLENA';
const ITEMSETID = 'SET1';
const CHANGEBY = 'MAXADMIN';
const SEED = 0x1143_0001;
/** Business dates count back from a fixed day rather than from now, so the same seed gives the same rows. */
const ANCHOR = Date.UTC(2025, 0, 6);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

// ---------------------------------------------------------------------------------------------------------------
// Locations: per site a root, four buildings with four areas each, and the storerooms and shops (25 per site).

/** What an area is used for, so that assets land where such equipment belongs (no trucks on an office floor). */
type AreaKind = 'office' | 'production' | 'plant' | 'roof' | 'yard';
type LocStatus = 'OPERATING' | 'NOT READY' | 'DECOMMISSIONED';

interface AreaPlan {
  code: string;
  description: string;
  kind: AreaKind;
  status?: LocStatus;
}

interface SitePlan {
  siteid: string;
  description: string;
  rootDescription: string;
  buildings: ReadonlyArray<{ code: string; description: string; areas: readonly AreaPlan[] }>;
  /** [location, type, description]; hung under the site root. */
  support: ReadonlyArray<readonly [string, string, string]>;
}

const sitePlans: readonly SitePlan[] = [
  {
    siteid: 'BEDFORD',
    description: 'Bedford Manufacturing Plant',
    rootDescription: 'Bedford Site',
    buildings: [
      {
        code: 'BR100',
        description: 'Building 100 - Administration',
        areas: [
          { code: 'BR100-F1', description: 'Administration Floor 1', kind: 'office' },
          {
            code: 'BR100-F2',
            description: 'Administration Floor 2',
            kind: 'office',
            status: 'DECOMMISSIONED',
          },
          { code: 'BR100-SRV', description: 'Administration Server Room', kind: 'office' },
          { code: 'BR100-RF', description: 'Administration Roof', kind: 'roof' },
        ],
      },
      {
        code: 'BR200',
        description: 'Building 200 - Production',
        areas: [
          { code: 'BR200-L1', description: 'Assembly Line 1', kind: 'production' },
          { code: 'BR200-L2', description: 'Assembly Line 2', kind: 'production', status: 'NOT READY' },
          { code: 'BR200-PK', description: 'Packaging Area', kind: 'production' },
          { code: 'BR200-RF', description: 'Production Building Roof', kind: 'roof' },
        ],
      },
      {
        code: 'BR300',
        description: 'Building 300 - Central Plant',
        areas: [
          { code: 'BR300-BLR', description: 'Central Plant Boiler Room', kind: 'plant' },
          { code: 'BR300-CHL', description: 'Central Plant Chiller Room', kind: 'plant' },
          { code: 'BR300-ELE', description: 'Central Plant Electrical Room', kind: 'plant' },
          { code: 'BR300-CT', description: 'Cooling Tower Yard', kind: 'roof' },
        ],
      },
      {
        code: 'BR400',
        description: 'Building 400 - Warehouse and Shipping',
        areas: [
          { code: 'BR400-WH', description: 'Warehouse Floor', kind: 'production' },
          { code: 'BR400-DK', description: 'Shipping Dock', kind: 'yard' },
          { code: 'BR400-YD', description: 'Fleet Yard', kind: 'yard' },
          { code: 'BR400-RF', description: 'Warehouse Roof', kind: 'roof' },
        ],
      },
    ],
    support: [
      ['CENTRAL', 'STOREROOM', 'Central Storeroom'],
      ['TOOLCRIB', 'STOREROOM', 'Tool Crib'],
      ['REPAIRSHOP', 'REPAIR', 'Bedford Repair Shop'],
      ['SALVAGE', 'SALVAGE', 'Bedford Salvage Yard'],
    ],
  },
  {
    siteid: 'NASHUA',
    description: 'Nashua Distribution Center',
    rootDescription: 'Nashua Site',
    buildings: [
      {
        code: 'NA100',
        description: 'Building 100 - Offices',
        areas: [
          { code: 'NA100-F1', description: 'Office Floor 1', kind: 'office' },
          { code: 'NA100-F2', description: 'Office Floor 2', kind: 'office', status: 'NOT READY' },
          { code: 'NA100-SRV', description: 'Data Center', kind: 'office' },
          { code: 'NA100-RF', description: 'Office Roof', kind: 'roof' },
        ],
      },
      {
        code: 'NA200',
        description: 'Building 200 - Distribution',
        areas: [
          { code: 'NA200-DC1', description: 'Sortation Area', kind: 'production' },
          { code: 'NA200-DC2', description: 'Pick Module', kind: 'production' },
          { code: 'NA200-DK', description: 'Receiving Dock', kind: 'yard' },
          { code: 'NA200-RF', description: 'Distribution Center Roof', kind: 'roof' },
        ],
      },
      {
        code: 'NA300',
        description: 'Building 300 - Utilities',
        areas: [
          { code: 'NA300-BLR', description: 'Utility Boiler Room', kind: 'plant' },
          { code: 'NA300-ELE', description: 'Switchgear Room', kind: 'plant' },
          { code: 'NA300-PMP', description: 'Fire Pump Room', kind: 'plant' },
          { code: 'NA300-GEN', description: 'Generator Room', kind: 'plant', status: 'DECOMMISSIONED' },
        ],
      },
      {
        code: 'NA400',
        description: 'Building 400 - Fleet Garage',
        areas: [
          { code: 'NA400-BAY1', description: 'Garage Service Bay 1', kind: 'yard' },
          { code: 'NA400-BAY2', description: 'Garage Service Bay 2', kind: 'yard' },
          { code: 'NA400-LOT', description: 'Vehicle Lot', kind: 'yard' },
          { code: 'NA400-RF', description: 'Fleet Garage Roof', kind: 'roof' },
        ],
      },
    ],
    support: [
      ['NASHSTORE', 'STOREROOM', 'Nashua Storeroom'],
      ['SPARES', 'STOREROOM', 'Spare Parts Cage'],
      ['REPAIRSHOP', 'REPAIR', 'Nashua Repair Shop'],
      ['SALVAGE', 'SALVAGE', 'Nashua Salvage Yard'],
    ],
  },
];

// ---------------------------------------------------------------------------------------------------------------
// Assets: equipment models by the kind of area they stand in; components become child assets.

interface AssetModel {
  description: string;
  type: 'FACILITIES' | 'FLEET' | 'IT' | 'PRODUCTION' | 'TRANSPORTATION';
  price: readonly [number, number];
  makers: readonly string[];
  components?: readonly string[];
}

const assetModels: Record<AreaKind, readonly AssetModel[]> = {
  production: [
    {
      description: 'Centrifugal Pump 100GPM/60FT HD',
      type: 'PRODUCTION',
      price: [4500, 9800],
      makers: ['GOULDS', 'ARMSTRONG'],
      components: ['Pump Motor 15HP 460V TEFC', 'Mechanical Seal Assembly'],
    },
    {
      description: 'Reciprocating Air Compressor 25HP',
      type: 'PRODUCTION',
      price: [11000, 18500],
      makers: ['INGERSOLL', 'QUINCY'],
      components: ['Compressor Motor 25HP', 'Refrigerated Air Dryer 100CFM'],
    },
    {
      description: 'Belt Conveyor 24in x 40ft',
      type: 'PRODUCTION',
      price: [15000, 32000],
      makers: ['HYTROL'],
      components: ['Conveyor Drive Motor 3HP', 'Gear Reducer 20:1'],
    },
    {
      description: 'Hydraulic Press 150 Ton',
      type: 'PRODUCTION',
      price: [85000, 140000],
      makers: ['GREENERD'],
      components: ['Hydraulic Power Unit 20HP'],
    },
    {
      description: 'Case Sealer Packaging Line',
      type: 'PRODUCTION',
      price: [18000, 26000],
      makers: ['LOVESHAW'],
      components: ['Tape Head Assembly'],
    },
    {
      description: 'Industrial Robot 6-Axis',
      type: 'PRODUCTION',
      price: [55000, 90000],
      makers: ['FANUC', 'ABB'],
      components: ['Robot Controller', 'Teach Pendant'],
    },
    {
      description: 'CNC Vertical Machining Center',
      type: 'PRODUCTION',
      price: [95000, 180000],
      makers: ['HAAS'],
      components: ['Spindle Motor 30HP', 'Chip Conveyor'],
    },
    {
      description: 'Dust Collector 5000 CFM',
      type: 'PRODUCTION',
      price: [14000, 22000],
      makers: ['DONALDSON'],
      components: ['Dust Collector Blower Motor 15HP'],
    },
  ],
  plant: [
    {
      description: 'Hot Water Boiler 2000 MBH',
      type: 'FACILITIES',
      price: [60000, 95000],
      makers: ['CLEAVERBROOK', 'LOCHINVAR'],
      components: ['Burner Assembly', 'Boiler Feed Pump 5HP'],
    },
    {
      description: 'Centrifugal Chiller 300 Ton',
      type: 'FACILITIES',
      price: [180000, 260000],
      makers: ['TRANE', 'CARRIER', 'YORK'],
      components: ['Chilled Water Pump 20HP', 'Condenser Water Pump 25HP'],
    },
    {
      description: 'Emergency Generator 250kW Diesel',
      type: 'FACILITIES',
      price: [65000, 90000],
      makers: ['CATERPILLAR', 'CUMMINS'],
      components: ['Automatic Transfer Switch 800A', 'Engine Block Heater 3kW'],
    },
    {
      description: 'Fire Pump 500GPM Electric',
      type: 'FACILITIES',
      price: [28000, 42000],
      makers: ['PATTERSON', 'AURORA'],
      components: ['Fire Pump Controller'],
    },
    {
      description: 'Switchgear 480V 2000A',
      type: 'FACILITIES',
      price: [45000, 70000],
      makers: ['SQUARED', 'EATON'],
      components: ['Main Circuit Breaker 2000A'],
    },
    {
      description: 'Hot Water Circulating Pump 7.5HP',
      type: 'FACILITIES',
      price: [3800, 6200],
      makers: ['BELLGOSSETT', 'TACO'],
      components: ['Pump Motor 7.5HP 460V'],
    },
  ],
  roof: [
    {
      description: 'Air Handling Unit',
      type: 'FACILITIES',
      price: [22000, 48000],
      makers: ['TRANE', 'CARRIER', 'YORK'],
      components: ['Supply Fan Motor 10HP', 'Variable Frequency Drive 10HP', 'Return Fan Motor 7.5HP'],
    },
    {
      description: 'Rooftop HVAC Unit 10 Ton',
      type: 'FACILITIES',
      price: [14000, 24000],
      makers: ['CARRIER', 'LENNOX', 'TRANE'],
      components: ['Condenser Fan Motor 1/2HP', 'Scroll Compressor 5 Ton'],
    },
    { description: 'Exhaust Fan 5000 CFM', type: 'FACILITIES', price: [2400, 5200], makers: ['GREENHECK'] },
    {
      description: 'Cooling Tower 400 Ton',
      type: 'FACILITIES',
      price: [90000, 140000],
      makers: ['BAC', 'MARLEY'],
      components: ['Cooling Tower Fan Motor 30HP', 'Cooling Tower Gear Drive'],
    },
  ],
  office: [
    {
      description: 'Network Switch 48 Port PoE',
      type: 'IT',
      price: [3200, 6400],
      makers: ['CISCO', 'ARUBA'],
    },
    {
      description: 'Rack Mount Server 2U',
      type: 'IT',
      price: [7500, 16000],
      makers: ['DELL', 'HPE', 'LENOVO'],
    },
    {
      description: 'Uninterruptible Power Supply 20kVA',
      type: 'IT',
      price: [12000, 21000],
      makers: ['EATON', 'APC'],
      components: ['UPS Battery Cabinet'],
    },
    {
      description: 'Computer Room Air Conditioner 20 Ton',
      type: 'FACILITIES',
      price: [38000, 55000],
      makers: ['VERTIV', 'STULZ'],
      components: ['CRAC Steam Humidifier'],
    },
    {
      description: 'Passenger Elevator 3500 lb',
      type: 'FACILITIES',
      price: [120000, 180000],
      makers: ['OTIS', 'SCHINDLER'],
      components: ['Elevator Controller', 'Elevator Hoist Motor 25HP'],
    },
    { description: 'Multifunction Printer', type: 'IT', price: [2800, 6500], makers: ['XEROX', 'RICOH'] },
    { description: 'Wireless Access Point', type: 'IT', price: [650, 1200], makers: ['CISCO', 'ARUBA'] },
  ],
  yard: [
    {
      description: 'Fleet Truck Ford F-750 Box',
      type: 'FLEET',
      price: [68000, 85000],
      makers: ['FORD'],
      components: ['Hydraulic Liftgate 2500 lb'],
    },
    {
      description: 'Pickup Truck 4x4 Crew Cab',
      type: 'FLEET',
      price: [38000, 52000],
      makers: ['FORD', 'CHEVROLET'],
    },
    {
      description: 'Service Van Cargo High Roof',
      type: 'FLEET',
      price: [42000, 56000],
      makers: ['FORD', 'MERCEDES'],
    },
    {
      description: 'Forklift 5000 lb LPG',
      type: 'FLEET',
      price: [28000, 38000],
      makers: ['TOYOTA', 'HYSTER'],
    },
    {
      description: 'Electric Pallet Jack 4500 lb',
      type: 'FLEET',
      price: [6500, 9800],
      makers: ['CROWN', 'RAYMOND'],
    },
    {
      description: 'Yard Tractor Terminal Truck',
      type: 'TRANSPORTATION',
      price: [95000, 125000],
      makers: ['KALMAR', 'CAPACITY'],
    },
    {
      description: 'Box Trailer 53ft Dry Van',
      type: 'TRANSPORTATION',
      price: [38000, 52000],
      makers: ['WABASH'],
    },
    {
      description: 'Shuttle Bus 24 Passenger',
      type: 'TRANSPORTATION',
      price: [88000, 115000],
      makers: ['STARCRAFT'],
    },
    {
      description: 'Dock Leveler Hydraulic 7x8',
      type: 'FACILITIES',
      price: [7800, 12000],
      makers: ['RITE-HITE'],
      components: ['Dock Leveler Hydraulic Pump'],
    },
  ],
};

const areaKindWeights: ReadonlyArray<readonly [AreaKind, number]> = [
  ['production', 25],
  ['plant', 20],
  ['roof', 20],
  ['office', 15],
  ['yard', 20],
];

const assetsPerSite: Record<string, number> = { BEDFORD: 120, NASHUA: 100 };
const FIRST_ASSETNUM = 11430;

// ---------------------------------------------------------------------------------------------------------------
// Items: twenty per commodity group. [description, orderunit, issueunit, unit cost, rotating]

type ItemPlan = readonly [string, string, string, number, boolean?];

const itemPlans: Record<string, readonly ItemPlan[]> = {
  '4100': [
    ['Fuse 30A 600V Class J Time Delay', 'BOX', 'EACH', 18.5],
    ['Fuse 60A 600V Class RK5', 'BOX', 'EACH', 24],
    ['Circuit Breaker 20A 1P 120V', 'EACH', 'EACH', 14.75],
    ['Circuit Breaker 100A 3P 480V', 'EACH', 'EACH', 410],
    ['Contactor 3P 40A 120V Coil', 'EACH', 'EACH', 96],
    ['Motor Starter NEMA Size 1', 'EACH', 'EACH', 285],
    ['Control Relay 24VDC DPDT', 'EACH', 'EACH', 22],
    ['Wire THHN 12 AWG Copper Black', 'ROLL', 'FT', 0.42],
    ['Wire THHN 10 AWG Copper Green', 'ROLL', 'FT', 0.65],
    ['Lamp LED T8 4ft 18W 4000K', 'CASE', 'EACH', 6.8],
    ['LED High Bay Fixture 150W', 'EACH', 'EACH', 189],
    ['Ballast Electronic 2-Lamp T8', 'EACH', 'EACH', 31],
    ['Photocell 120-277V Twist Lock', 'EACH', 'EACH', 12.4],
    ['Terminal Block 600V 30A', 'BOX', 'EACH', 3.2],
    ['Electrical Tape 3/4in Black', 'BOX', 'ROLL', 2.1],
    ['Receptacle Duplex 20A 125V', 'BOX', 'EACH', 4.75],
    ['Cable Tie 8in Nylon Black', 'BAG', 'EACH', 0.06],
    ['Proximity Sensor Inductive 18mm', 'EACH', 'EACH', 68],
    ['Variable Frequency Drive 10HP 480V', 'EACH', 'EACH', 1850, true],
    ['Electric Motor 5HP 1800RPM TEFC', 'EACH', 'EACH', 740, true],
  ],
  '4200': [
    ['Bearing Ball 6205-2RS', 'EACH', 'EACH', 8.9],
    ['Bearing Ball 6308-2Z', 'EACH', 'EACH', 21.5],
    ['Bearing Pillow Block 1-7/16in', 'EACH', 'EACH', 64],
    ['V-Belt A48', 'EACH', 'EACH', 11.2],
    ['V-Belt B52', 'EACH', 'EACH', 14.6],
    ['Timing Belt 8MGT-1200-30', 'EACH', 'EACH', 88],
    ['Mechanical Seal 1.625in Type 21', 'EACH', 'EACH', 245],
    ['Coupling Jaw L-100 Spider', 'EACH', 'EACH', 9.8],
    ['Coupling Hub L-100 1in Bore', 'EACH', 'EACH', 27],
    ['Gasket Spiral Wound 4in 150#', 'EACH', 'EACH', 16.5],
    ['Grease Lithium EP2 14oz Cartridge', 'CASE', 'EACH', 7.25],
    ['Gear Oil ISO 220', 'PAIL', 'GAL', 19],
    ['Roller Chain #40 10ft', 'EACH', 'EACH', 34],
    ['Sprocket 40B18 1in Bore', 'EACH', 'EACH', 29],
    ['Impeller 10in Bronze', 'EACH', 'EACH', 690],
    ['Shaft Sleeve 1.625in Stainless', 'EACH', 'EACH', 118],
    ['O-Ring Kit Buna-N 382 Piece', 'KIT', 'KIT', 45],
    ['Hydraulic Hose 1/2in x 36in', 'EACH', 'EACH', 38],
    ['Hydraulic Cylinder 3in Bore 12in Stroke', 'EACH', 'EACH', 520, true],
    ['Gearbox Reducer 30:1 Right Angle', 'EACH', 'EACH', 1280, true],
  ],
  '4300': [
    ['Ball Valve 1in Brass Full Port', 'EACH', 'EACH', 24],
    ['Ball Valve 2in Brass Full Port', 'EACH', 'EACH', 61],
    ['Gate Valve 2in Flanged Cast Iron', 'EACH', 'EACH', 210],
    ['Check Valve 1-1/2in Swing Bronze', 'EACH', 'EACH', 88],
    ['Butterfly Valve 4in Lug Style', 'EACH', 'EACH', 175],
    ['Pipe Copper Type L 3/4in', 'FT', 'FT', 3.1],
    ['Pipe PVC Schedule 40 2in', 'FT', 'FT', 1.9],
    ['Elbow 90 Degree 2in PVC Schedule 40', 'BOX', 'EACH', 2.4],
    ['Coupling Copper 3/4in', 'BAG', 'EACH', 1.15],
    ['Backflow Preventer 1in RPZ', 'EACH', 'EACH', 385],
    ['Pressure Gauge 0-160 PSI 2.5in', 'EACH', 'EACH', 19.5],
    ['Thermometer Bimetal 0-250F', 'EACH', 'EACH', 32],
    ['Flush Valve Diaphragm Kit', 'KIT', 'KIT', 14],
    ['Faucet Cartridge Single Handle', 'EACH', 'EACH', 26],
    ['Pipe Thread Sealant 8oz', 'EACH', 'EACH', 8.4],
    ['Strainer Y-Type 1in Bronze', 'EACH', 'EACH', 74],
    ['Pressure Reducing Valve 1in', 'EACH', 'EACH', 148],
    ['Solenoid Valve 1/2in 24VAC', 'EACH', 'EACH', 92],
    ['Sump Pump 1/2HP Submersible', 'EACH', 'EACH', 310, true],
    ['Water Heater Element 4500W 240V', 'EACH', 'EACH', 21],
  ],
  '4400': [
    ['Air Filter 20x20x2 MERV 8', 'CASE', 'EACH', 6.4],
    ['Air Filter 24x24x2 MERV 8', 'CASE', 'EACH', 7.1],
    ['Air Filter 24x24x12 Bag MERV 14', 'EACH', 'EACH', 48],
    ['Air Filter 16x25x1 MERV 11', 'CASE', 'EACH', 5.2],
    ['Refrigerant R-410A 25lb Cylinder', 'EACH', 'EACH', 265],
    ['Refrigerant R-134a 30lb Cylinder', 'EACH', 'EACH', 240],
    ['Thermostat Programmable 7-Day', 'EACH', 'EACH', 89],
    ['Fan Belt BX46 Cogged', 'EACH', 'EACH', 16],
    ['Condenser Fan Motor 1/2HP 1075RPM', 'EACH', 'EACH', 165, true],
    ['Blower Motor 1HP 1725RPM', 'EACH', 'EACH', 230, true],
    ['Damper Actuator 24V Modulating', 'EACH', 'EACH', 215],
    ['Run Capacitor 45/5 MFD 440V', 'EACH', 'EACH', 18],
    ['Contactor 2P 30A 24V Coil', 'EACH', 'EACH', 24],
    ['Scroll Compressor 5 Ton R-410A', 'EACH', 'EACH', 1450, true],
    ['Condensate Pump 115V', 'EACH', 'EACH', 78],
    ['Coil Cleaner Alkaline 1 Gallon', 'CASE', 'EACH', 22],
    ['Humidifier Steam Canister', 'EACH', 'EACH', 185],
    ['Duct Temperature Sensor 10K', 'EACH', 'EACH', 42],
    ['Thermal Expansion Valve 3 Ton', 'EACH', 'EACH', 96],
    ['Filter Drier 3/8in SAE', 'EACH', 'EACH', 14],
  ],
  '4500': [
    ['Safety Glasses Clear Anti-Fog', 'BOX', 'PAIR', 3.9],
    ['Nitrile Gloves Large 6 mil', 'CASE', 'BOX', 14],
    ['Cut Resistant Gloves Size 9', 'PAIR', 'PAIR', 9.5],
    ['Ear Plugs Foam NRR 32', 'BOX', 'PAIR', 0.22],
    ['Hard Hat Type I Class E White', 'EACH', 'EACH', 18],
    ['Safety Vest Class 2 Hi-Vis', 'EACH', 'EACH', 11],
    ['Lockout Padlock Red Keyed Different', 'EACH', 'EACH', 16],
    ['Lockout Hasp 1in Jaw', 'EACH', 'EACH', 6.5],
    ['Lockout Tag Danger Do Not Operate', 'PKG', 'EACH', 1.1],
    ['Fire Extinguisher 10lb ABC', 'EACH', 'EACH', 72],
    ['First Aid Kit 50 Person', 'EACH', 'EACH', 58],
    ['Eyewash Station Refill Cartridge', 'EACH', 'EACH', 42],
    ['Respirator Half Mask Medium', 'EACH', 'EACH', 24],
    ['Respirator Cartridge P100', 'PAIR', 'PAIR', 13],
    ['Fall Protection Harness Universal', 'EACH', 'EACH', 165],
    ['Shock Absorbing Lanyard 6ft', 'EACH', 'EACH', 68],
    ['Portable 4-Gas Detector', 'EACH', 'EACH', 890, true],
    ['Arc Flash Face Shield 12 cal', 'EACH', 'EACH', 145],
    ['Spill Kit Universal 20 Gallon', 'EACH', 'EACH', 124],
    ['Traffic Cone 28in Orange', 'EACH', 'EACH', 15],
  ],
};

const FIRST_ITEMNUM = 1001;

// ---------------------------------------------------------------------------------------------------------------
// Work orders.

const WORK_ORDERS = 100;
const FIRST_WONUM = 1000;

const woStatusWeights: ReadonlyArray<readonly [string, number]> = [
  ['WAPPR', 15],
  ['APPR', 15],
  ['WSCH', 10],
  ['WMATL', 8],
  ['WPCOND', 5],
  ['INPRG', 15],
  ['COMP', 12],
  ['CLOSE', 15],
  ['CAN', 5],
];

type WorkType = 'CM' | 'PM' | 'EM' | 'CP' | 'EV';

const workTypeWeights: ReadonlyArray<readonly [WorkType, number]> = [
  ['PM', 40],
  ['CM', 35],
  ['EM', 10],
  ['CP', 8],
  ['EV', 7],
];

/** Worded to fit any equipment or area, since the target is drawn independently of the work type. */
const woSummaries: Record<WorkType, readonly string[]> = {
  PM: ['Monthly PM', 'Quarterly PM', 'Semi-Annual PM', 'Annual Inspection'],
  CM: [
    'Investigate fault',
    'Not operating',
    'Intermittent failure reported',
    'Repair damage found on inspection',
  ],
  EM: ['Emergency repair', 'Emergency - smoke reported', 'Emergency - safety hazard'],
  CP: ['Replace end-of-life equipment', 'Upgrade controls', 'Energy efficiency retrofit'],
  EV: ['Safety walkdown', 'Insurance inspection', 'Regulatory audit'],
};

const woDurations: Record<WorkType, readonly number[]> = {
  PM: [0.5, 1, 1.5, 2, 4],
  CM: [1, 2, 3, 4, 6, 8],
  EM: [2, 4, 8, 12],
  CP: [16, 24, 40, 80],
  EV: [1, 2, 4],
};

// ---------------------------------------------------------------------------------------------------------------
// People and security.

const demoPeople = [
  { personid: 'WILSON', firstname: 'Mike', lastname: 'Wilson', email: 'mike.wilson@eaglena.example.com' },
  { personid: 'SMITH', firstname: 'John', lastname: 'Smith', email: 'john.smith@eaglena.example.com' },
] as const;

const ALL_RIGHTS = { canread: true, caninsert: true, canupdate: true, candelete: true };
const READ_ONLY = { canread: true, caninsert: false, canupdate: false, candelete: false };

const demoGroups: ReadonlyArray<{
  groupname: string;
  description: string;
  members: readonly string[];
  rights: ReadonlyArray<readonly [string, typeof ALL_RIGHTS | typeof READ_ONLY]>;
}> = [
  {
    groupname: 'MAINT',
    description: 'Maintenance Technicians',
    members: ['WILSON'],
    rights: [
      ['MXAPIASSET', ALL_RIGHTS],
      ['MXAPIOPERLOC', ALL_RIGHTS],
      ['MXAPIWODETAIL', ALL_RIGHTS],
      ['MXAPIWO', ALL_RIGHTS],
      ['MXAPISR', ALL_RIGHTS],
      ['MXAPIITEM', READ_ONLY],
      ['MXAPIDOMAIN', READ_ONLY],
      ['MXAPISYNONYMDOMAIN', READ_ONLY],
    ],
  },
  {
    groupname: 'VIEWER',
    description: 'Read-Only Viewers',
    members: ['SMITH'],
    rights: [
      ['MXAPIASSET', READ_ONLY],
      ['MXAPIOPERLOC', READ_ONLY],
      ['MXAPIITEM', READ_ONLY],
      ['MXAPIWODETAIL', READ_ONLY],
      ['MXAPIWO', READ_ONLY],
      ['MXAPISR', READ_ONLY],
    ],
  },
];

// ---------------------------------------------------------------------------------------------------------------

type Row = Record<string, unknown>;

type LocationRow = {
  location: string;
  siteid: string;
  orgid: string;
  description: string;
  status: LocStatus;
  statusdate: Date;
  type: string;
  parent: string | null;
  changedate: Date;
  changeby: string;
};

type AssetRow = {
  assetnum: string;
  siteid: string;
  orgid: string;
  description: string;
  status: LocStatus;
  statusdate: Date;
  assettype: string;
  location: string;
  parent: string | null;
  serialnum: string;
  manufacturer: string;
  purchaseprice: number;
  installdate: Date;
  priority: number;
  isrunning: boolean;
  changedate: Date;
  changeby: string;
};

const emptySummary: DemoSummary = {
  organizations: 0,
  sites: 0,
  locations: 0,
  assets: 0,
  items: 0,
  workOrders: 0,
  tasks: 0,
  serviceRequests: 0,
  statusHistory: 0,
  assetMeters: 0,
  assetSpecs: 0,
  persons: 0,
  users: 0,
  groups: 0,
  groupMembers: 0,
  groupRights: 0,
};

function buildLocations(now: Date): { levels: LocationRow[][]; areaKinds: Map<string, AreaKind> } {
  const roots: LocationRow[] = [];
  const middle: LocationRow[] = [];
  const leaves: LocationRow[] = [];
  const areaKinds = new Map<string, AreaKind>();
  const location = (
    siteid: string,
    code: string,
    description: string,
    type: string,
    parent: string | null,
    status: LocStatus = 'OPERATING',
  ): LocationRow => ({
    location: code,
    siteid,
    orgid: ORGID,
    description,
    status,
    statusdate: now,
    type,
    parent,
    changedate: now,
    changeby: CHANGEBY,
  });

  for (const plan of sitePlans) {
    roots.push(location(plan.siteid, plan.siteid, plan.rootDescription, 'OPERATING', null));
    for (const building of plan.buildings) {
      middle.push(location(plan.siteid, building.code, building.description, 'OPERATING', plan.siteid));
      for (const area of building.areas) {
        leaves.push(
          location(plan.siteid, area.code, area.description, 'OPERATING', building.code, area.status),
        );
        areaKinds.set(`${plan.siteid}/${area.code}`, area.kind);
      }
    }
    for (const [code, type, description] of plan.support) {
      middle.push(location(plan.siteid, code, description, type, plan.siteid));
    }
  }
  return { levels: [roots, middle, leaves], areaKinds };
}

function buildAssets(
  dice: Dice,
  now: Date,
  locations: readonly LocationRow[],
  areaKinds: ReadonlyMap<string, AreaKind>,
): { parents: AssetRow[]; children: AssetRow[] } {
  const parents: AssetRow[] = [];
  const children: AssetRow[] = [];
  let next = FIRST_ASSETNUM;
  const statusWeights: ReadonlyArray<readonly [LocStatus, number]> = [
    ['OPERATING', 85],
    ['NOT READY', 9],
    ['DECOMMISSIONED', 6],
  ];
  const priorityWeights: ReadonlyArray<readonly [number, number]> = [
    [1, 5],
    [2, 15],
    [3, 40],
    [4, 25],
    [5, 15],
  ];
  const serial = (maker: string): string =>
    `${maker.replace(/[^A-Z]/g, '').slice(0, 3)}-${dice.int(1_000_000, 9_999_999)}`;

  for (const plan of sitePlans) {
    const quota = assetsPerSite[plan.siteid] ?? 0;
    const places = new Map<AreaKind, LocationRow[]>();
    for (const row of locations) {
      const kind = areaKinds.get(`${row.siteid}/${row.location}`);
      if (row.siteid !== plan.siteid || kind === undefined || row.status === 'DECOMMISSIONED') continue;
      places.set(kind, [...(places.get(kind) ?? []), row]);
    }
    let made = 0;
    while (made < quota) {
      const kind = dice.weighted(areaKindWeights);
      const model = dice.pick(assetModels[kind]);
      const place = dice.pick(places.get(kind) ?? []);
      const maker = dice.pick(model.makers);
      // Equipment in an area still being commissioned is not ready either, unless it is already retired.
      const drawn = dice.weighted(statusWeights);
      const status = place.status === 'NOT READY' && drawn === 'OPERATING' ? 'NOT READY' : drawn;
      const installdate = new Date(ANCHOR - dice.int(60, 15 * 365) * DAY);
      const parent: AssetRow = {
        assetnum: String(next++),
        siteid: plan.siteid,
        orgid: ORGID,
        description: model.description,
        status,
        statusdate: now,
        assettype: model.type,
        location: place.location,
        parent: null,
        serialnum: serial(maker),
        manufacturer: maker,
        purchaseprice: dice.amount(model.price[0], model.price[1]),
        installdate,
        priority: dice.weighted(priorityWeights),
        isrunning: status === 'OPERATING',
        changedate: now,
        changeby: CHANGEBY,
      };
      parents.push(parent);
      made++;
      for (const component of model.components ?? []) {
        if (made >= quota || !dice.chance(0.35)) continue;
        // A component is retired or not ready with its parent; a working parent may still have a broken part.
        const childStatus = status === 'OPERATING' ? dice.weighted(statusWeights) : status;
        children.push({
          ...parent,
          assetnum: String(next++),
          description: component,
          status: childStatus,
          parent: parent.assetnum,
          serialnum: serial(maker),
          purchaseprice: Math.round(parent.purchaseprice * (5 + dice.int(0, 15))) / 100,
          installdate: new Date(Math.min(ANCHOR, installdate.getTime() + dice.int(0, 3 * 365) * DAY)),
          priority: parent.priority,
          isrunning: childStatus === 'OPERATING',
        });
        made++;
      }
    }
  }
  return { parents, children };
}

function buildItems(dice: Dice, now: Date): Row[] {
  const statusWeights: ReadonlyArray<readonly [string, number]> = [
    ['ACTIVE', 85],
    ['PENDING', 5],
    ['PLANNING', 4],
    ['PENDOBS', 3],
    ['OBSOLETE', 3],
  ];
  let next = FIRST_ITEMNUM;
  return Object.entries(itemPlans).flatMap(([commoditygroup, plans]) =>
    plans.map(([description, orderunit, issueunit, cost, rotating]) => ({
      itemnum: `0-${next++}`,
      itemsetid: ITEMSETID,
      description,
      status: dice.weighted(statusWeights),
      commoditygroup,
      orderunit,
      issueunit,
      rotating: rotating ?? false,
      unitcost: Math.max(0.01, Math.round(cost * (90 + dice.int(0, 20))) / 100),
      changedate: now,
      changeby: CHANGEBY,
    })),
  );
}

function buildWorkOrders(
  dice: Dice,
  now: Date,
  locations: readonly LocationRow[],
  assets: readonly AssetRow[],
  areaKinds: ReadonlyMap<string, AreaKind>,
): Row[] {
  const rows: Row[] = [];
  for (let index = 0; index < WORK_ORDERS; index++) {
    const siteid = dice.pick(sitePlans).siteid;
    const worktype = dice.weighted(workTypeWeights);
    // Work is planned against equipment in service, and a few jobs against an area itself.
    const inService = assets.filter((asset) => asset.siteid === siteid && asset.status !== 'DECOMMISSIONED');
    const asset = inService.length > 0 && dice.chance(0.85) ? dice.pick(inService) : undefined;
    const location =
      asset?.location ??
      dice.pick(
        locations.filter(
          (row) =>
            row.siteid === siteid &&
            row.status !== 'DECOMMISSIONED' &&
            areaKinds.has(`${row.siteid}/${row.location}`),
        ),
      ).location;
    const target =
      asset?.description ??
      locations.find((row) => row.siteid === siteid && row.location === location)?.description;
    const reportdate = new Date(ANCHOR - dice.int(0, 240) * DAY + dice.int(7, 17) * HOUR);
    const targstartdate = new Date(
      reportdate.getTime() + (worktype === 'EM' ? 1 : dice.int(1, 14) * 24) * HOUR,
    );
    const estdur = dice.pick(woDurations[worktype]);
    rows.push({
      wonum: String(FIRST_WONUM + index),
      siteid,
      orgid: ORGID,
      description: `${dice.pick(woSummaries[worktype])} - ${target ?? location}`.slice(0, 100),
      status: dice.weighted(woStatusWeights),
      statusdate: now,
      worktype,
      assetnum: asset?.assetnum ?? null,
      location,
      wopriority: worktype === 'EM' ? 1 : dice.int(2, 5),
      reportedby: dice.pick(['WILSON', 'SMITH', 'MAXADMIN']),
      reportdate,
      targstartdate,
      targcompdate: new Date(targstartdate.getTime() + estdur * HOUR),
      estdur,
      changedate: now,
      changeby: CHANGEBY,
    });
  }
  return rows;
}

/** Preventive-maintenance work orders of each site that get tasks (`<wonum>-10`, `-20`). */
const WORK_ORDERS_WITH_TASKS_PER_SITE = 4;
const ASSETS_WITH_METERS = 20;

function buildTasks(workOrders: readonly Row[]): Row[] {
  return sitePlans.flatMap((plan) =>
    workOrders
      .filter((row) => row.worktype === 'PM' && row.siteid === plan.siteid)
      .slice(0, WORK_ORDERS_WITH_TASKS_PER_SITE)
      .flatMap(tasksOf),
  );
}

/** One history row per record: the status it has, since its status date. */
function statusHistory(rows: readonly Row[], key: 'wonum' | 'assetnum' | 'ticketid'): Row[] {
  return rows.map((row) => ({
    [key]: row[key],
    siteid: row.siteid,
    orgid: row.orgid,
    status: row.status,
    changedate: row.statusdate,
    changeby: CHANGEBY,
  }));
}

function buildMeters(dice: Dice, now: Date, assets: readonly AssetRow[]): Row[] {
  return assets.map((asset) => ({
    assetnum: asset.assetnum,
    siteid: asset.siteid,
    orgid: asset.orgid,
    metername: 'RUNHOURS',
    linearassetid: 0,
    active: true,
    lastreading: String(dice.int(100, 40_000)),
    lastreadingdate: new Date(ANCHOR - dice.int(0, 30) * DAY),
    measureunitid: 'HOURS',
    changedate: now,
    changeby: CHANGEBY,
  }));
}

function buildSpecs(dice: Dice, now: Date, assets: readonly AssetRow[]): Row[] {
  return assets.flatMap((asset) => [
    {
      assetnum: asset.assetnum,
      siteid: asset.siteid,
      orgid: asset.orgid,
      assetattrid: 'RATEDPOWER',
      numvalue: dice.pick([0.75, 1.5, 5.5, 11, 22, 45]),
      measureunitid: 'KW',
      changedate: now,
      changeby: CHANGEBY,
    },
    {
      assetnum: asset.assetnum,
      siteid: asset.siteid,
      orgid: asset.orgid,
      assetattrid: 'ENCLOSURE',
      alnvalue: dice.pick(['IP55', 'IP65', 'IP66']),
      changedate: now,
      changeby: CHANGEBY,
    },
  ]);
}

/** Per site, an operating area where its project takes place. */
function projectSites(
  locations: readonly LocationRow[],
  areaKinds: ReadonlyMap<string, AreaKind>,
): Array<{ siteid: string; orgid: string; location: string; locationDescription: string }> {
  return sitePlans.map((plan) => {
    const area = locations.find(
      (row) =>
        row.siteid === plan.siteid &&
        row.status === 'OPERATING' &&
        areaKinds.get(`${row.siteid}/${row.location}`) === 'production',
    )!;
    return {
      siteid: plan.siteid,
      orgid: ORGID,
      location: area.location,
      locationDescription: area.description,
    };
  });
}

/** What a site's service requests are about: its assets in service (at their location) and its areas in service. */
function requestTargets(
  siteid: string,
  locations: readonly LocationRow[],
  assets: readonly AssetRow[],
  areaKinds: ReadonlyMap<string, AreaKind>,
): Array<{ siteid: string; orgid: string; location: string; assetnum: string | null }> {
  return [
    ...assets
      .filter((asset) => asset.siteid === siteid && asset.status === 'OPERATING')
      .map((asset) => ({ siteid, orgid: ORGID, location: asset.location, assetnum: asset.assetnum })),
    ...locations
      .filter(
        (row) =>
          row.siteid === siteid && row.status === 'OPERATING' && areaKinds.has(`${siteid}/${row.location}`),
      )
      .map((row) => ({ siteid, orgid: ORGID, location: row.location, assetnum: null })),
  ];
}

/** Each demo site numbers its own service requests (`TICKETID` per site), after the ones seeded. */
async function insertTicketAutokeys(db: Kysely<DynamicDatabase>): Promise<void> {
  for (const plan of sitePlans) {
    await sql`insert into autokey (autokeyname, orgid, siteid, seed)
      values ('TICKETID', ${ORGID}, ${plan.siteid}, ${FIRST_TICKETID + REQUESTS_PER_SITE})
      on conflict do nothing`.execute(db);
  }
}

/** Whether the demo organization is there: a restart with EAS_DEMO=1 then skips hashing the demo password. */
export async function isDemoDataLoaded(db: Kysely<Database>): Promise<boolean> {
  const dynamic = dynamicView(db);
  const row = await dynamic
    .selectFrom('organization')
    .select('orgid')
    .where('orgid', '=', ORGID)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Two working migration package definitions (docs/migration.md, "Demo definitions"): DEMOSNAP, a SNAPSHOT of the
 * Bedford locations and assets, and DEMOCHANGE, a CHANGE definition of items, active from the start; both with a
 * FILE target. `source` is this database's identity, as the migration service derives it.
 */
async function seedPackageDefinitions(db: Kysely<DynamicDatabase>, now: Date): Promise<void> {
  const identity = await sql<{ source: string }>`
    select coalesce(host(inet_server_addr()) || ':' || inet_server_port()::text, 'localhost') || '/' ||
      current_database() || '/' || current_schema() as source`.execute(db);
  const source = identity.rows[0]!.source;
  const stamp = { changedate: now, changeby: CHANGEBY };
  await db
    .insertInto('dmpackagedef')
    .values([
      {
        pkgdefname: 'DEMOSNAP',
        source,
        type: 'SNAPSHOT',
        status: 'APPR',
        statusdate: now,
        active: false,
        description: 'Bedford locations and assets',
        xmlaction: 'AddChange',
        batchsize: 500,
        ...stamp,
      },
      {
        pkgdefname: 'DEMOCHANGE',
        source,
        type: 'CHANGE',
        status: 'APPR',
        statusdate: now,
        active: true,
        description: 'Changes of items',
        xmlaction: 'AddChange',
        batchsize: 500,
        ...stamp,
      },
    ])
    .execute();
  await db
    .insertInto('dmpkgdefcontent')
    .values([
      {
        pkgdefname: 'DEMOSNAP',
        objectstructure: 'MXAPIOPERLOC',
        whereclause: 'siteid="BEDFORD"',
        cfgdataorder: 1,
      },
      {
        pkgdefname: 'DEMOSNAP',
        objectstructure: 'MXAPIASSET',
        whereclause: 'siteid="BEDFORD"',
        cfgdataorder: 2,
      },
      { pkgdefname: 'DEMOCHANGE', objectstructure: 'MXAPIITEM', whereclause: null, cfgdataorder: 1 },
    ])
    .execute();
  await db
    .insertInto('dmpkgdsttrgt')
    .values([
      {
        pkgdefname: 'DEMOSNAP',
        targetname: 'DEMOFILE',
        type: 'FILE',
        description: 'Package file to download',
      },
      {
        pkgdefname: 'DEMOCHANGE',
        targetname: 'DEMOFILE',
        type: 'FILE',
        description: 'Package file to download',
      },
    ])
    .execute();
}

/**
 * Loads the EAGLENA demonstration organization: two sites, a location hierarchy, assets, items, work orders, two
 * users and their security groups. Runs once: if EAGLENA exists nothing is written and the counts are zero.
 */
export async function seedDemoData(db: Kysely<Database>, options: SeedOptions): Promise<DemoSummary> {
  const dice = new Dice(options.random ?? mulberry32(SEED));
  return db.transaction().execute(async (trx) => {
    const dynamic = dynamicView(trx);
    const existing = await dynamic
      .selectFrom('organization')
      .select('orgid')
      .where('orgid', '=', ORGID)
      .executeTakeFirst();
    if (existing) return { ...emptySummary };

    // The organization row is the claim: a concurrent seeding waits on its key and then backs off.
    const claimed = await dynamic
      .insertInto('organization')
      .values({ orgid: ORGID, description: 'Eagle North America', itemsetid: ITEMSETID, basecurrency: 'USD' })
      .onConflict((conflict) => conflict.column('orgid').doNothing())
      .returning('orgid')
      .executeTakeFirst();
    if (!claimed) return { ...emptySummary };

    const now = new Date();
    const summary: DemoSummary = { ...emptySummary, organizations: 1 };
    const insert = async (table: string, rows: readonly Row[]): Promise<number> => {
      if (rows.length > 0)
        await dynamic
          .insertInto(table)
          .values([...rows])
          .execute();
      return rows.length;
    };

    await trx
      .insertInto('site')
      .values(
        sitePlans.map((plan) => ({
          siteid: plan.siteid,
          orgid: ORGID,
          description: plan.description,
          active: true,
        })),
      )
      .execute();
    summary.sites = sitePlans.length;

    const { levels, areaKinds } = buildLocations(now);
    for (const level of levels) summary.locations += await insert('locations', level);
    const locations = levels.flat();

    const { parents, children } = buildAssets(dice, now, locations, areaKinds);
    summary.assets = (await insert('asset', parents)) + (await insert('asset', children));

    summary.items = await insert('item', buildItems(dice, now));
    const workOrders = buildWorkOrders(dice, now, locations, [...parents, ...children], areaKinds);
    // A generator of its own: what was added later leaves the rows drawn before it as they were.
    const planning = new Dice(options.random ?? mulberry32(SEED + 1));
    planWorkOrders(planning, workOrders);
    const tasks = buildTasks(workOrders);
    const projects = buildProjects(planning, now, ANCHOR, projectSites(locations, areaKinds));
    const projectTasks = projects.filter((row) => row.istask === true);
    summary.workOrders =
      (await insert('workorder', workOrders)) + (await insert('workorder', projects)) - projectTasks.length;
    summary.tasks = (await insert('workorder', tasks)) + projectTasks.length;
    const requests = sitePlans.flatMap((plan) =>
      buildServiceRequests(
        planning,
        now,
        ANCHOR,
        plan.siteid,
        requestTargets(plan.siteid, locations, [...parents, ...children], areaKinds),
      ),
    );
    summary.serviceRequests = await insert('ticket', requests);
    await insertTicketAutokeys(dynamic);
    summary.statusHistory =
      (await insert('wostatus', statusHistory([...workOrders, ...projects, ...tasks], 'wonum'))) +
      (await insert('assetstatus', statusHistory([...parents, ...children], 'assetnum'))) +
      (await insert('tkstatus', statusHistory(requests, 'ticketid')));
    const metered = parents.slice(0, ASSETS_WITH_METERS);
    summary.assetMeters = await insert('assetmeter', buildMeters(dice, now, metered));
    summary.assetSpecs = await insert('assetspec', buildSpecs(dice, now, metered));

    await trx
      .insertInto('person')
      .values(
        demoPeople.map((person) => ({
          personid: person.personid,
          displayname: `${person.firstname} ${person.lastname}`,
          firstname: person.firstname,
          lastname: person.lastname,
          primaryemail: person.email,
          status: 'ACTIVE',
          locationsite: 'BEDFORD',
          changedate: now,
          changeby: CHANGEBY,
        })),
      )
      .execute();
    summary.persons = demoPeople.length;
    await trx
      .insertInto('maxuser')
      .values(
        demoPeople.map((person) => ({
          userid: person.personid,
          loginid: person.personid,
          personid: person.personid,
          status: 'ACTIVE',
          password: options.passwordHash,
          defsite: 'BEDFORD',
          sysuser: false,
          changedate: now,
          changeby: CHANGEBY,
        })),
      )
      .execute();
    summary.users = demoPeople.length;

    await trx
      .insertInto('maxgroup')
      .values(
        demoGroups.map((group) => ({
          groupname: group.groupname,
          description: group.description,
          adminmodelogin: false,
          // There is no per-site authorization table, so a group reaches site data only through authallsites.
          authallsites: true,
          changedate: now,
          changeby: CHANGEBY,
        })),
      )
      .execute();
    summary.groups = demoGroups.length;
    const memberships = demoGroups.flatMap((group) =>
      group.members.map((userid) => ({ groupname: group.groupname, userid })),
    );
    await trx.insertInto('groupuser').values(memberships).execute();
    summary.groupMembers = memberships.length;
    const rights = demoGroups.flatMap((group) =>
      group.rights.map(([objectstructure, grant]) => ({
        groupname: group.groupname,
        objectstructure,
        ...grant,
      })),
    );
    await trx.insertInto('osauth').values(rights).execute();
    summary.groupRights = rights.length;

    await seedPackageDefinitions(dynamic, now);

    return summary;
  });
}
